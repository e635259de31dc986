"""Operations on a project, each behind one CLI command group: ``admin`` (status, on/off,
tuning, audit verification), ``init`` (``.forge/`` and the harness settings), ``git_hooks``
(the commit-msg and pre-commit checks), ``git_install`` (writing those git hooks) and
``replay`` (a catalog, or two to diff, over recorded sessions, which ``transcript`` reads back
from Claude Code's transcript files)."""
