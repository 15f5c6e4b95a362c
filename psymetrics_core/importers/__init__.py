"""Importers that convert other frameworks' questionnaire files into psymetrics instrument specs."""
