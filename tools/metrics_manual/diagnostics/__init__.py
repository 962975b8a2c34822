"""Findings: the one finding type (code, severity, file position, message, hint) and its reporter."""
