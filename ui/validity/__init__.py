"""The Validity page: does memorization bias the year of publication and narrative time a model gives?"""
