"""Twenty-one, a seventh game family in one folder: rules and kernel, notation and view, and a player.

Nothing outside this folder names it. A test registers it with
``ggp.registry.load_family(this folder)``; a process started with
``GGP_FAMILIES=this folder`` (the CLI, say) finds it by itself.
"""

from ggp.core.family import Family

FAMILY = Family(
    name="twentyone",
    games={"twentyone": (".rules:TwentyOne", ())},
    agents={"twentyone": ".player:CountingAgent"},
    view=".view:VIEW",
    titles={"twentyone": ("Twenty-one", "Add 1, 2 or 3 to the count in turn; whoever says 21 wins.")},
)
