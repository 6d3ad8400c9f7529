"""NodeFlow's benchmarks: one module per subject, each with `main(argv) -> int`; `python -m benchmarks` runs them all."""
