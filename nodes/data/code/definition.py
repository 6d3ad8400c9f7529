from nodeflow_app.contract import NodeDefinition, Parameter, Socket

DEFAULT_CODE = """# `input` is this node's input; `items` is the same value when it is a list (else None).
# What you `return` becomes the output (JSON values only). print() shows in the step card.
return input
"""

definition = NodeDefinition(
    id="code",
    name="Code",
    description=(
        "Run your Python on the input, in a separate process with a time and memory limit. The code is "
        "the body of a function: `input` holds the input (`items` too when it is a list) and what it "
        "`return`s becomes the output. Standard library only; the process is isolated: no network, no "
        "programs, no file but its own scratch folder, none of the server's environment (no keys). "
        "See docs/security.md."
    ),
    category="data",
    icon="code",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="code", label="Python", type="code", default=DEFAULT_CODE, expressions=False,
                  description="The body of a function of `input` and `items`; `return` the output."),
        Parameter(id="time_limit", label="Time limit (s)", type="float", default=5.0, min=0.1, max=300, step=0.5,
                  description="Wall-clock seconds before the code is stopped."),
        Parameter(id="memory_mb", label="Memory limit (MB)", type="int", default=256, min=64, max=8192, step=64,
                  description="Address space the code's process may use."),
    ),
    outputs=(
        Socket(id="output", label="Output", side="right", description="What the code returned."),
        Socket(id="console", label="Console", side="right",
               description="{stdout, stderr} the code printed; no value when it printed nothing."),
    ),
)
