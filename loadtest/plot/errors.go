package plot

import "errors"

// ErrEmpty is returned when no series has a point to draw.
var ErrEmpty = errors.New("plot: nothing to draw: no series has a point")
