"""The machinery that keeps the site honest: fence and include checks, build-time math rendering."""
