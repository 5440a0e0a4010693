// Package guards holds end-to-end tests of what curate does with what it
// cannot trust: classifications and cards held back as suspect, quiet
// prompt injections, misbehaving and refusing models, each model of the
// table under its provider's rules, and keys echoed back by services
// (redacted from everything curate writes).
package guards
