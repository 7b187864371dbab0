"""The use cases: one module per verb (build, links, serve, config, deploy, verify, list, teardown, gc, doctor).
A command calls one of them; they call the builder, the citations and the publisher (docs/ARCHITECTURE.md)."""
