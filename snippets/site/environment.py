"""Print the versions this machine would produce results with, as the verification page shows them."""

# --8<-- [start:example]
from gpukb import environment
from gpukb.tables import markdown_table

print(markdown_table(["item", "value"], environment.rows(environment.collect())))
# --8<-- [end:example]
