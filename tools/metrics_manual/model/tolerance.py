"""The relative tolerance of an expectation that states none: judge's --rtol, the site's value checker,
derive's floor under a median's spread. A module of its own so that judge's --help, which shows it,
loads no model."""

DEFAULT_RTOL = 0.10
