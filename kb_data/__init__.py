"""kb-data: KernelBench problem sets, baselines and run records as versioned datasets, and the grader."""
import os as _os

__version__ = "0.1.0"

# builders/ and harness/ are installed as kb_data.builders and kb_data.harness (setuptools package-dir).
# When kb_data is imported straight from a source checkout (its folder first on sys.path), let the
# checkout's root serve those subpackages too, so the checkout behaves like the installed package.
_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "harness")) and \
        _os.path.isfile(_os.path.join(_root, "harness", "__init__.py")):
    __path__.append(_root)  # noqa: F821 (package __path__)
