"""Validate a results file the way the site does: the model of its kind refuses anything it does not describe."""

# --8<-- [start:example]
import json
import tempfile
from pathlib import Path

from gpukb import records

record = records.load("formats/h100-gpu-checks")  # a committed record, by id
print(record.kind, "schema", record.schema_version, "|", records.measured_on(record.run, command=False))

# Break a copy the way a hand edit might: a count as a string, and a misspelled field.
data = json.loads(record.model_dump_json())
data["casts"][0]["inputs"] = str(data["casts"][0]["inputs"])
data["tf32"]["seeed"] = 0
path = Path(tempfile.mkdtemp()) / "edited.json"
path.write_text(json.dumps(data))
try:
    records.read(path)
except ValueError as err:
    print(str(err).replace(str(path), "edited.json"))
# --8<-- [end:example]
