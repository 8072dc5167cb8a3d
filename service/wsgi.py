"""The WSGI entry point for gunicorn: `gunicorn -c ops/gunicorn.conf.py 'service.wsgi:app'`."""

from service.app import create_app

app = create_app()
