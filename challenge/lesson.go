package challenge

import (
	"fmt"

	lab "github.com/rmlab/lab"
)

// Lessons are the ladder as lessons of the screen's list, in part
// challenges: each the challenge's page and one challenge step, which runs
// the program the learner set (the screen's p) under the challenge.
func Lessons(lang string) ([]*lab.Lesson, error) {
	all, err := All(lang)
	if err != nil {
		return nil, err
	}
	var out []*lab.Lesson
	for _, c := range all {
		out = append(out, Lesson(c, lang))
	}
	return out, nil
}

// LessonID is the screen's id of challenge name.
func LessonID(name string) string { return "challenge-" + name }

// Lesson is challenge c as a lesson of the screen.
func Lesson(c *lab.Challenge, lang string) *lab.Lesson {
	how := map[string]string{
		"en": "Press **p** to set the command that runs your program (it runs in the folder the lab was started in), then **Enter** to run it under a seed's faults: seed 1 first, the next one after each pass. The timeline is in the Chaos panel; the verdict, and why each order went wrong, below. `lab challenge init %s --lang go ./%s` writes a starter; `lab challenge contract` prints what your program gets and what is checked.",
		"zh": "按 **p** 设置运行你的程序的命令（在启动实验的目录里运行），再按 **Enter**，在某个种子的故障下运行：先用种子 1，每通过一次换下一个。时间线在 Chaos 面板里；判定结果和每个出错订单的原因在下方。`lab challenge init %s --lang go ./%s` 写出一个起步程序；`lab challenge contract` 打印你的程序能拿到什么、检查什么。",
	}[lang]
	step := &lab.Step{Kind: "challenge", Attrs: map[string]string{"name": c.Name, "lang": lang}, File: c.File, Line: 1}
	return &lab.Lesson{
		ID: LessonID(c.Name), Number: c.Number, Part: lab.PartChallenges, Title: c.Title, Lang: lang, File: c.File, Line: 1,
		Needs:  []lab.Capability{lab.CapAMQP},
		Queues: []string{"orders"},
		Blocks: []lab.Block{{Prose: c.Text}, {Prose: fmt.Sprintf(how, c.Name, c.Name)}, {Step: step}},
	}
}
