"""Print the versions this machine would produce results with, as the verification page shows them."""

# --8<-- [start:example]
from gpukb import environment

print(environment.as_markdown(environment.collect()))
# --8<-- [end:example]
