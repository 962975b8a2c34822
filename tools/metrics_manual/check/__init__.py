"""Stage 5, check: docs, exports and schemas compared with ranges/ in memory, and profiles re-judged on their captures."""
