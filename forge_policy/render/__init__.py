"""Renderers: a decision as text and as a harness's answer.

``messages`` renders a violation's message from its behavior's templates (the one owner of the
message rules); ``claude_code`` turns a ``Decision`` into Claude Code's hook JSON and holds its
``bypassPermissions`` rule, which the evaluator receives as its ``auto_approve``;
``replay_html`` draws the ``forge-policy replay --html`` report.
"""
