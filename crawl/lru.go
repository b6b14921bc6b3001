package crawl

import (
	"container/list"
	"sync"
)

// lru is a bounded set of strings, least recently used evicted first. It
// is safe for concurrent use.
type lru struct {
	mu    sync.Mutex // guards order and items
	max   int
	order *list.List
	items map[string]*list.Element
}

func newLRU(max int) *lru {
	return &lru{max: max, order: list.New(), items: make(map[string]*list.Element)}
}

// has reports whether k is in the set, marking it used.
func (c *lru) has(k string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if ok {
		c.order.MoveToFront(e)
	}
	return ok
}

func (c *lru) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[k] = c.order.PushFront(k)
	if c.order.Len() > c.max {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(string))
	}
}
