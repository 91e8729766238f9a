"""The bundled examples: the predictions of ``python -m medeval.evaluate --example`` (files
beside this module) and the own-model tables of ``python -m medeval.subconcepts --example``
(:mod:`medeval.examples.vehicle`)."""
