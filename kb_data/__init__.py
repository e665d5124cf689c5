"""kb-data: KernelBench problem sets, baselines and run records as versioned datasets, and the grader.

`builders/` and `harness/` are installed as kb_data.builders and kb_data.harness (setuptools package-dir, editable
installs included): use the package installed (`pip install -e .`), not a checkout on sys.path.
"""
__version__ = "0.1.0"
