"""The terminal lab (Textual): the lesson list, lesson screens with live views, and the views on their own.

`LabApp` in `app.py`; screens in `screens/`; one module per live view in `views/`, all fed by `feed.BrokerFeed` (the
embedded broker's events, coalesced per frame) or by polling the Admin API on other backends.
"""
