"""The web app: play, watch and replay every game in a browser, with the history in SQLite.

``ggp web`` serves it (``pip install 'ggp[web]'`` brings FastAPI, uvicorn and
Jinja2). :func:`ggp.web.app.create_app` builds the FastAPI application and
:mod:`ggp.web.server` runs it; the pages are server-rendered HTML with one
small script (``static/app.js``), and everything they do goes through the
JSON API under ``/api`` (documented at ``/docs``).

This package only imports FastAPI in its submodules, so ``import ggp.web``
works without the extra.
"""
