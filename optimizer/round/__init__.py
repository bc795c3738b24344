"""A round as a pipeline of small typed stages, each a module with one input and one output model:

``diagnose`` (:class:`~optimizer.round.diagnose.Base` -> ``Diagnosed``) -> ``propose`` (-> ``Proposed``) ->
``screen`` (-> ``Screened``) -> ``judge`` (-> ``Judged``), assembled into a ``kb.models.Round`` by
``optimizer.round.pipeline``. Around the rounds: ``baseline`` (round 0), ``select`` (the best round), ``unseen`` (the
winner on cases the session never saw) and ``persist`` (the trajectory on disk and in the KB). Every stage reads one
:class:`~optimizer.round.context.RoundSetup`, which carries the problem, backend and settings and makes the harness
calls with them. ``optimizer.session.Session`` runs the pipeline; ``optimizer.diagnosis`` opens the same set-up.
"""
