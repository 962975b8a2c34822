"""Stage 4, the disk: what build writes (one plan for build and check) and the journaled switch of generated files."""
