"""Private plumbing shared by the stores and the audit sinks: the one file lock
(:mod:`~forge_policy._infra.filelock`) and the PostgreSQL connection helpers
(:mod:`~forge_policy._infra.pg`); the cold hook's import of attrs
(:mod:`~forge_policy._infra.lean_attrs`); and the work a warm answer does not wait for
(:mod:`~forge_policy._infra.answer_first`). Not a public API: any module of ``forge_policy`` may
import it, nothing outside the package should.
"""
