package webtable_test

import (
	"fmt"
	"net/url"

	"github.com/caffeine-go/caffeine/webtable"
)

func ExampleNormalize() {
	for _, raw := range []string{
		"HTTP://BÜCHER.de:80/a//b/./c/../d?q=a b#frag",
		"http://0x7f.1/%7euser",
	} {
		n, _ := webtable.Normalize(raw)
		fmt.Println(n)
	}
	// Output:
	// http://xn--bcher-kva.de/a//b/d?q=a%20b
	// http://127.0.0.1/~user
}

func ExampleResolve() {
	base, _ := url.Parse("http://example.com/docs/a/page.html")
	for _, href := range []string{"../b/", "p.html? #x", `\\cdn.example.org\x`, "mailto:a@example.com"} {
		u, err := webtable.Resolve(base, href)
		fmt.Println(u, err != nil)
	}
	// Output:
	// http://example.com/docs/b/ false
	// http://example.com/docs/a/p.html?%20 false
	// http://cdn.example.org/x false
	//  true
}

func ExampleDisplayURL() {
	fmt.Println(webtable.DisplayURL("http://xn--bcher-kva.de/katalog"))
	// Output: http://bücher.de/katalog
}
