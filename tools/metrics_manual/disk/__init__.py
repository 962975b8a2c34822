"""Stage 4, the disk: files read and written safely (files.py), and what build writes under docs/ with its
journaled switch, one plan for build and check (switch.py)."""
