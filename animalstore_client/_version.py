"""The package version, which follows the interface version it implements."""

__version__ = "1.0.0"
