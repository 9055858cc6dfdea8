// Remakes yaml-golden.json's expected YAML with the API server's own conversion, for
// yaml.test.ts: each case's json is written as the API server writes JSON (Go's encoding/json),
// then turned into YAML as sigs.k8s.io/yaml JSONToYAML does (go-yaml v2 decodes it and marshals
// the result). With gopkg.in/yaml.v2 v2.4.0 on GOPATH (Debian: golang-gopkg-yaml.v2-dev):
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go run test/unit/yaml-golden.go < test/unit/yaml-golden.json > new.json
//
// A case the API server cannot convert is written with "ERROR: ..." as its yaml; one whose keys
// go-yaml sorts in no fixed order comes out different from run to run. Leave both out.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v2"
)

type golden struct {
	About string `json:"about"`
	Cases []struct {
		JSON string `json:"json"`
		YAML string `json:"yaml"`
	} `json:"cases"`
}

func apiServerYAML(in []byte) (string, error) {
	var doc interface{}
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return "", err
	}
	j, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	var obj interface{}
	if err := yaml.Unmarshal(j, &obj); err != nil {
		return "", err
	}
	out, err := yaml.Marshal(obj)
	return string(out), err
}

func line(v interface{}) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func main() {
	var g golden
	if err := json.NewDecoder(os.Stdin).Decode(&g); err != nil {
		panic(err)
	}
	lines := []string{}
	for _, c := range g.Cases {
		y, err := apiServerYAML([]byte(c.JSON))
		if err != nil {
			y = "ERROR: " + err.Error()
		}
		c.YAML = y
		lines = append(lines, line(c))
	}
	fmt.Printf("{\n\"about\": %s,\n\"cases\": [\n%s\n]\n}\n", line(g.About), strings.Join(lines, ",\n"))
}
