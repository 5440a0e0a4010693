// Package grid lays out the rows of a table whose cells span several
// columns or rows, the way every parser of record.Table does: a spanning
// cell is repeated in each position it covers, so that the rows of a
// regular table come out equally long.
package grid

// Grid carries row spans from one row into the next. The zero value is
// ready to use for one table.
type Grid struct {
	down []carry // by column
}

type carry struct {
	text string
	left int // rows still covered
}

// Row is one row being laid out.
type Row struct {
	g     *Grid
	cells []string
	col   int
}

// Row starts the next row of the table.
func (g *Grid) Row() *Row { return &Row{g: g} }

// fillDown places the cells that rows above span into this row, up to
// the next free column.
func (r *Row) fillDown() {
	for r.col < len(r.g.down) && r.g.down[r.col].left > 0 {
		r.cells = append(r.cells, r.g.down[r.col].text)
		r.g.down[r.col].left--
		r.col++
	}
}

// Cell adds a cell spanning cols columns and rows rows (each at least 1).
func (r *Row) Cell(text string, cols, rows int) {
	r.fillDown()
	for range max(cols, 1) {
		r.cells = append(r.cells, text)
		if rows > 1 {
			for len(r.g.down) <= r.col {
				r.g.down = append(r.g.down, carry{})
			}
			r.g.down[r.col] = carry{text: text, left: rows - 1}
		}
		r.col++
	}
}

// End finishes the row (placing cells spanned from above after its last
// cell) and returns its cells; nil for a row with none.
func (r *Row) End() []string {
	r.fillDown()
	return r.cells
}
