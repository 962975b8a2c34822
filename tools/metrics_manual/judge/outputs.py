"""The forms judge prints its verdicts in (report_text.render writes each): names only, so that judge's
--help, which lists them, loads no judging."""

OUTPUTS = ("text", "json", "junit", "github")
