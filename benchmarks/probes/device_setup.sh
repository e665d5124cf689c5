# Sourced by the device scripts from session 25 on: the install every fresh device machine needs (the wheels carried
# in wheels-dev, the package in place, pytest) and the machine's card, into $OUT/host.txt. Sets START (the call's
# start, for scripts that bound their last step by what is left of the call).
START=$(date +%s)
python -m pip install -q --no-deps wheels-dev/*.whl >/dev/null 2>&1
python -m pip install -q --no-build-isolation --no-deps -e . >/dev/null 2>&1
python -m pip install -q pytest >/dev/null 2>&1
nvidia-smi --query-gpu=name,serial,driver_version --format=csv >> "$OUT/host.txt" 2>&1  # appended: a script that sources this again (s47_device3.sh) keeps the lines before
