"""The built-in game families, one package each: ``amazons``, ``bomberman``, ``wallmaze``.

A family's package holds its rules and kernel (``rules``), its player, its
page view and its rule sheets (``*.kif``); its ``__init__`` defines ``FAMILY``
(:class:`ggp.core.family.Family`), which names them. ``ggp.load(name)`` builds
the games (:mod:`ggp.registry` finds the families), and a new family is one
more package here. A family's rules import ``ggp.core`` only; its player may
build on ``ggp.agents``; nothing here knows of matches, the web or the CLI.
"""
