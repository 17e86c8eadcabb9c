#!/usr/bin/env python
"""Django's manage.py (migrate and seed run untraced: no OTEL_SERVICE_NAME)."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "booksite.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
