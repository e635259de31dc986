"""Adversarial suites: padding, failing facts and an agent working against its own governance.

Each one drives the engine the way a hostile or merely unlucky agent would: a hard-blocked
command padded to a megabyte, a fact provider that runs out of budget, a tool call that edits
``.forge/`` or switches a behavior off. The block must hold, say why and be audited.
"""
