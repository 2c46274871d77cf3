"""The IR: values, nodes and graphs, their text form, the verifier, the reference interpreter,
and the tracer that turns a Python function into a graph."""
