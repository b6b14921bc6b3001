// Package webtable is the schema of the web table: how URLs become row keys
// and which columns hold what. The crawler writes pages through it and the
// observers read them through it, so both agree on one layout.
//
// Rows are keyed by reversed-host URL, as in Bigtable's Webtable and Nutch:
// http://www.example.com:8080/a?b is row "com.example.www:http:8080/a?b", so
// one site's pages are adjacent and a site is a row range. Rows that are not
// pages start with '!' (they sort before every reversed host).
package webtable
