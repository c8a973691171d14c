"""The base layer: printable bounded text, version numbers read from files, the JSON codec of the model, the
loader's search order (pure), redaction, marks and colours, calls bounded in time. Internal to the package; it
imports nothing of pytest_cudnn above it."""
