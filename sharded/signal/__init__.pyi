from sharded.signal import windows as windows
