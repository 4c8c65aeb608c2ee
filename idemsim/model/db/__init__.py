"""idemsim's database: a SimPy model of PostgreSQL for the key and charge tables, and the tools that check it
against a real PostgreSQL (schedules, a runner, a comparison). See docs/db-model.md."""
