// Package pdfs holds end-to-end tests of the open-access PDF path
// (--grobid): sources carded from PDF full text, hostile URLs refused,
// GROBID's capacity, refresh upgrading sources, and the PDF flags.
package pdfs
