"""The report's sections, one module per section, each with ``build(data)``.

``build`` returns a :class:`~vareval.report.sections._base.Section` or None
when the data (or the analysis it needs) is absent.
"""
