"""kb-data: KernelBench problem sets, baselines and run records as versioned datasets, and the grader."""
__version__ = "0.1.0"
