"""Binary floating-point formats: how a number is stored, and what storing it does to the number."""
