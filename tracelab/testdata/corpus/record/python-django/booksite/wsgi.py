"""The WSGI application that waitress serves, traced when OTEL_SERVICE_NAME is set."""
import os

from booksite import tracing

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "booksite.settings")
tracing.setup_if_configured()

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()
