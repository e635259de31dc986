"""Replay tests (``forge-policy replay``, issue 15) and their transcript fixtures.

``upload-session.jsonl`` and ``rename-session.jsonl`` are synthetic: written for these tests,
in the record shapes real Claude Code transcripts have (CLI 2.0, learned from public
transcripts and the parsers that read them: daaain/claude-code-log ``models.py``,
alicoding/claude-parser ``docs/JSONL-STRUCTURE.md``, simonw/claude-code-transcripts). They hold
user prompts, assistant ``tool_use`` blocks (one per record, as Claude Code streams them),
``tool_result`` blocks with ``toolUseResult``, an error result, a Task subagent's sidechain,
``summary``/``file-history-snapshot``/``system``/``queue-operation`` records, an ``isMeta``
caveat, a record type no parser knows (``worktree-state``) and, in the second file, a record
repeated from the first (as a resumed session's file repeats its predecessor's).
"""
