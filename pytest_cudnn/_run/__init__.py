"""The pytest run, split by subject: :mod:`.records` (each test's facts and the refusals), :mod:`.xdist` (the
controller's hosts, plans and what each worker is handed) and :mod:`.outputs` (header, JUnit properties, reports).
:class:`pytest_cudnn._run.session.GpuRun` holds the settings and the run's one environment and judgement, and the parts;
:mod:`pytest_cudnn.plugin` keeps only the hooks."""
