"""The app's screens: the lesson list, a lesson, a prediction, help, and a view on its own."""
