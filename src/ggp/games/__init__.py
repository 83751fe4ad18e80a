"""The built-in games, one module per family: amazons, bomberman, wallmaze; their rule sheets in ``rules/``.

``ggp.load(name)`` builds them (:mod:`ggp.registry` lists them by name, and
``ggp.game_names()`` returns the names). A game module knows nothing of
agents, matches or the web: it imports ``ggp.core`` only.
"""
