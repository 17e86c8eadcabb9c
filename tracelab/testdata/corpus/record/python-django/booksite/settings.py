"""Settings of the corpus application (record/python-django.sh).

Only what the three pages need: the books app, no sessions, auth, admin or
templates, so the only SQL in a request is the books app's own.
"""
import os

SECRET_KEY = "corpus-recording-only"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = ["books"]
MIDDLEWARE = []
ROOT_URLCONF = "booksite.urls"
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",  # psycopg2 (psycopg 3 is not installed)
        "NAME": os.environ.get("BOOKS_DB_NAME", "books"),
        "USER": os.environ.get("BOOKS_DB_USER", "books"),
        "PASSWORD": "",
        "HOST": "127.0.0.1",
        "PORT": os.environ["BOOKS_DB_PORT"],
        # A persistent connection per waitress thread, as a production
        # setting would have: no connection set-up in most requests.
        "CONN_MAX_AGE": 600,
    }
}
LOGGING = {"version": 1, "disable_existing_loggers": False}
