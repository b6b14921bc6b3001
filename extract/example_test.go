package extract_test

import (
	"fmt"

	"github.com/caffeine-go/caffeine/extract"
)

func ExampleHTML() {
	body := []byte(`<!DOCTYPE html>
<html lang="en">
<head>
  <title>Widgets</title>
  <meta name="description" content="All about widgets.">
  <base href="https://shop.example/catalogue/">
  <script>track()</script>
</head>
<body>
  <h1>Widgets</h1>
  <p>See the <a href="red.html">red   widget</a> and the <a href="/blue#top">blue one</a>.</p>
  <a href="red.html"><img src="red.png" alt="Red widget photo"></a>
  <a href="https://ads.example/" rel="sponsored">Buy now</a>
  <a href="mailto:shop@example.com">Mail us</a>
</body>
</html>`)
	p, err := extract.HTML("https://shop.example/widgets", body, "text/html; charset=utf-8", extract.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Title, "|", p.Lang, "|", p.Description)
	fmt.Println(p.Text)
	for _, l := range p.Links {
		fmt.Printf("%s %q\n", l.URL, l.Anchor)
	}
	// Output:
	// Widgets | en | All about widgets.
	// Widgets See the red widget and the blue one. Buy now Mail us
	// https://shop.example/catalogue/red.html "red widget | Red widget photo"
	// https://shop.example/blue "blue one"
}
