"""Stage 1, the source: ranges/*.yaml read with line and column, then validated into the model."""
