"""Support code for the tests (daemons, images, clusters they bring up)."""
